export * from './gateway.service';
export * from './bootstrap/start-gateway';
