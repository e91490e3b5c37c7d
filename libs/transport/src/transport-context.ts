import { BaseRpcContext } from '@nestjs/microservices';
import { TransportHeaders } from './wire/headers';

type TransportContextArgs = [subject: string, headers: TransportHeaders];

/**
 * What a handler receives as `@Ctx()` on both transports: the subject the message came on and the
 * headers the caller attached (names lower-cased).
 */
export class TransportContext extends BaseRpcContext<TransportContextArgs> {
  constructor(subject: string, headers: TransportHeaders) {
    super([subject, Object.freeze({ ...headers })]);
  }

  getSubject(): string {
    return this.args[0];
  }

  getHeaders(): Readonly<TransportHeaders> {
    return this.args[1];
  }

  /** Case-insensitive, like HTTP header names. */
  getHeader(name: string): string | undefined {
    return this.args[1][name.toLowerCase()];
  }
}
