import { IsEmail, IsOptional, Matches } from 'class-validator';
import { IsExternalId } from '../subject-fields';
import { APPLICATION_ID } from '../patterns';

/**
 * decisions: the people (subjects) an application asks for decisions. A subject's e-mail and
 * external id stay in its home country; only keyed references reach the directory.
 */
export const SUBJECTS_CREATE = 'decisions.subjects.create';
export const SUBJECTS_GET = 'decisions.subjects.get';
export const SUBJECTS_FIND = 'decisions.subjects.find';

export class CreateSubjectRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @IsOptional()
  @IsEmail()
  email?: string;

  @IsOptional()
  @IsExternalId()
  external_id?: string;
}

export class GetSubjectRequest {
  @Matches(APPLICATION_ID)
  application_id: string;

  @Matches(/^sub_[0-9a-z]{20}$/)
  subject_id: string;
}

/** Looks a person up by e-mail or external id (at least one), within one application. */
export class FindSubjectRequest extends CreateSubjectRequest {}

export interface SubjectMessage {
  id: string;
  application_id: string;
  home_country: string;
  email: string | null;
  external_id: string | null;
  created_at: string;
}

export interface CreateSubjectReply {
  subject: SubjectMessage;
  created: boolean;
}
