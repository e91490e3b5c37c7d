/** What `status` emits on both transports. */
export type TransportStatus = 'connected' | 'disconnected' | 'reconnecting';

/** Status events by name (NATS: `disconnect`, `reconnect`, `update`, `error`, ...), with their data. */
export type TransportEvents = Record<string, (data?: unknown) => void>;
