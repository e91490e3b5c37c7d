export * from './oidc.service';
