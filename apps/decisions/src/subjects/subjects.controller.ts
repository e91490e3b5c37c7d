import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  CreateSubjectReply,
  CreateSubjectRequest,
  FindSubjectRequest,
  GetSubjectRequest,
  SubjectMessage,
  SUBJECTS_CREATE,
  SUBJECTS_FIND,
  SUBJECTS_GET,
} from '@dcr/contracts';
import { SubjectsService } from './subjects.service';

@Controller()
export class SubjectsController {
  constructor(private readonly subjects: SubjectsService) {}

  @MessagePattern(SUBJECTS_CREATE)
  create(@Payload() request: CreateSubjectRequest): Promise<CreateSubjectReply> {
    return this.subjects.create(request);
  }

  @MessagePattern(SUBJECTS_GET)
  get(@Payload() request: GetSubjectRequest): Promise<SubjectMessage> {
    return this.subjects.get(request);
  }

  @MessagePattern(SUBJECTS_FIND)
  find(@Payload() request: FindSubjectRequest): Promise<SubjectMessage> {
    return this.subjects.find(request);
  }
}
