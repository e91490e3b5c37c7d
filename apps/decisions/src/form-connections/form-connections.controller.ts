import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  FORM_CONNECTIONS_CREATE,
  FORM_CONNECTIONS_DELETE,
  FORM_CONNECTIONS_GET,
  FORM_CONNECTIONS_LIST,
  FORM_CONNECTIONS_RECEIVE,
  FORM_CONNECTIONS_ROTATE_SECRET,
  FORM_CONNECTIONS_UPDATE_MAPPING,
  FormConnectionActionRequest,
  FormConnectionCreateRequest,
  FormConnectionListRequest,
  FormConnectionMappingRequest,
  FormConnectionRefRequest,
  FormSubmissionReceiveRequest,
} from '@dcr/contracts';
import { FormConnectionsService } from './form-connections.service';
import { ReceiveFormSubmission } from './receive-form-submission';

@Controller()
export class FormConnectionsController {
  constructor(
    private readonly connections: FormConnectionsService,
    private readonly receiveSubmission: ReceiveFormSubmission,
  ) {}

  @MessagePattern(FORM_CONNECTIONS_CREATE)
  create(@Payload() request: FormConnectionCreateRequest) {
    return this.connections.create(request);
  }

  @MessagePattern(FORM_CONNECTIONS_LIST)
  list(@Payload() request: FormConnectionListRequest) {
    return this.connections.list(request.application_id, request.after);
  }

  @MessagePattern(FORM_CONNECTIONS_GET)
  get(@Payload() request: FormConnectionRefRequest) {
    return this.connections.get(request);
  }

  @MessagePattern(FORM_CONNECTIONS_UPDATE_MAPPING)
  updateMapping(@Payload() request: FormConnectionMappingRequest) {
    return this.connections.updateMapping(request);
  }

  @MessagePattern(FORM_CONNECTIONS_ROTATE_SECRET)
  rotateSecret(@Payload() request: FormConnectionActionRequest) {
    return this.connections.rotateSecret(request);
  }

  @MessagePattern(FORM_CONNECTIONS_DELETE)
  async remove(@Payload() request: FormConnectionActionRequest) {
    await this.connections.remove(request);
    return { deleted: true };
  }

  @MessagePattern(FORM_CONNECTIONS_RECEIVE)
  receive(@Payload() request: FormSubmissionReceiveRequest) {
    return this.receiveSubmission.execute(request);
  }
}
