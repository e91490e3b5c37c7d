import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ReceiptsEnvironment } from '@dcr/config';
import { ServiceDefinition } from '@dcr/service-kit';
import { ReceiptKeys } from './keys/receipt-keys';
import { SigningKeyRecord } from './keys/signing-key.entity';
import { CreateReceipts1764300000000 } from './migrations/1764300000000-create-receipts';
import { DropUnreadReceiptIndexes1765200000000 } from './migrations/1765200000000-drop-unread-receipt-indexes';
import { LifecycleFactRecord } from './records/lifecycle-fact.entity';
import { ReceiptExporter } from './records/receipt-exporter';
import { ReceiptFreezer } from './records/receipt-freezer';
import { ReceiptRecord } from './records/receipt-record.entity';
import { ReceiptsController } from './receipts.controller';

export const RECEIPTS_ENTITIES = [ReceiptRecord, LifecycleFactRecord, SigningKeyRecord];

/** ISO/IEC TS 27560 receipts: frozen at commit from the decision events, exported in three flavors, signed. */
@Module({
  imports: [TypeOrmModule.forFeature(RECEIPTS_ENTITIES)],
  controllers: [ReceiptsController],
  providers: [ReceiptKeys, ReceiptFreezer, ReceiptExporter],
})
export class ReceiptsModule {}

export const receiptsService: ServiceDefinition = {
  name: 'receipts',
  schema: 'receipts',
  entities: RECEIPTS_ENTITIES,
  migrations: [CreateReceipts1764300000000, DropUnreadReceiptIndexes1765200000000],
  module: ReceiptsModule,
  environment: ReceiptsEnvironment,
};
