export * from './decisions.service';
