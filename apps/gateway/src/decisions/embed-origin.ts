import { ParticipantViewMessage } from '@dcr/contracts';
import { originMatches } from '@dcr/domain';
import { IndexedApplication } from '../connect/credential-index';

/**
 * A session's embed origin as it stands now: the one it was created with, while it is still one of
 * the application's allowed origins; null once the application removed it. The embed page frames
 * itself for, and posts its messages to, this origin only, so an origin taken off the list gets
 * neither (the page's messages are then dropped and counted as `origin_missing`, as for a session
 * made without one).
 */
export function embedOriginNow(view: Pick<ParticipantViewMessage, 'embed_origin'>, application: IndexedApplication | undefined): string | null {
  if (!view.embed_origin || !application) return null;
  return originMatches(view.embed_origin, application.origins, application.environment) ? view.embed_origin : null;
}
