/**
 * The Content-Security-Policy the pages are written for: no inline script, no inline styles, no
 * third-party origin. `frameAncestors` lists who may frame the page (the embed origin or the
 * application's allowed origins for `/embed`; leave empty for `'none'`). `assetOrigin` is needed only
 * when the assets come from another origin than the page. `sendsNothing` (template previews) also
 * closes `connect-src` and `form-action`: the page can neither call the API nor submit a form.
 */
export function contentSecurityPolicy(options: { frameAncestors?: readonly string[]; assetOrigin?: string | null; sendsNothing?: boolean } = {}): string {
  const self = options.assetOrigin ? `'self' ${options.assetOrigin}` : "'self'";
  const ancestors = options.frameAncestors && options.frameAncestors.length > 0 ? options.frameAncestors.join(' ') : "'none'";
  return [
    "default-src 'none'",
    `script-src ${self}`,
    `style-src ${self}`,
    "img-src 'self' data:",
    options.sendsNothing ? "connect-src 'none'" : "connect-src 'self'",
    options.sendsNothing ? "form-action 'none'" : "form-action 'self'",
    "base-uri 'none'",
    `frame-ancestors ${ancestors}`,
  ].join('; ');
}
