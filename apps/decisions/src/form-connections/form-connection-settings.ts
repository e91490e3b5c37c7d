import { Inject, Injectable, Logger } from '@nestjs/common';
import { DecisionsEnvironment } from '@dcr/config';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { hkdfSync } from 'node:crypto';

/** The form-builder connections' configuration, parsed once. */
@Injectable()
export class FormConnectionSettings {
  /** Seals connection secrets and tokens (AES-256-GCM), as WEBHOOK_SECRET_KEY does for subscriptions. */
  readonly secretKey: Buffer;
  /** Typeform's API base URL (no trailing slash). */
  readonly typeformApiUrl: string;

  constructor(@Inject(SERVICE_CONTEXT) context: ServiceContext) {
    const env = context.env as DecisionsEnvironment;
    if (env.FORM_CONNECTION_SECRET_KEY) {
      this.secretKey = Buffer.from(env.FORM_CONNECTION_SECRET_KEY, 'base64');
    } else {
      // The configuration refuses a production start without the key, so this is development and tests only.
      new Logger(FormConnectionSettings.name).warn('FORM_CONNECTION_SECRET_KEY derived from SUBJECT_REF_KEY (development only; production sets it)');
      this.secretKey = Buffer.from(hkdfSync('sha256', env.SUBJECT_REF_KEY, 'dcr-form-connections', `secret-key:${env.COUNTRY.toLowerCase()}`, 32));
    }
    this.typeformApiUrl = env.FORM_BUILDER_TYPEFORM_API_URL ?? 'https://api.typeform.com';
  }
}
