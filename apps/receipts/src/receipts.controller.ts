import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { RECEIPTS_EXPORT, RECEIPTS_INGEST, RECEIPTS_KEYS, ReceiptExportRequest, ReceiptsIngestRequest } from '@dcr/contracts';
import { ReceiptKeys } from './keys/receipt-keys';
import { ReceiptExporter } from './records/receipt-exporter';
import { ReceiptFreezer } from './records/receipt-freezer';

@Controller()
export class ReceiptsController {
  constructor(
    private readonly freezer: ReceiptFreezer,
    private readonly exporter: ReceiptExporter,
    private readonly keys: ReceiptKeys,
  ) {}

  @MessagePattern(RECEIPTS_INGEST)
  ingest(@Payload() request: ReceiptsIngestRequest) {
    return this.freezer.ingest(request.events);
  }

  @MessagePattern(RECEIPTS_EXPORT)
  export(@Payload() request: ReceiptExportRequest) {
    return this.exporter.export(request.record_id, request.flavor);
  }

  @MessagePattern(RECEIPTS_KEYS)
  published() {
    return this.keys.published();
  }
}
