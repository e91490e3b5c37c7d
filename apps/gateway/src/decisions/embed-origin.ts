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

/**
 * The origin of the page that frames an embed page, from the frame request's `Referer` (browsers
 * send at least the origin of a cross-origin parent by default), when it is one of the
 * application's allowed origins: the host a session made without `embed_origin` posts to. The
 * page's `frame-ancestors` lists only allowed origins, so a browser frames it nowhere else; a host
 * that sends no referrer leaves the frame's messages dropped (`origin_missing`), as before.
 */
export function embedOriginFromReferer(referer: string | undefined, application: IndexedApplication | undefined): string | null {
  if (!referer || !application) return null;
  let origin: string;
  try {
    origin = new URL(referer).origin;
  } catch {
    return null;
  }
  if (origin === 'null' || !/^https?:/.test(origin)) return null;
  return originMatches(origin, application.origins, application.environment) ? origin : null;
}
