import { Inject, Injectable, Optional } from '@nestjs/common';
import { DomainError, notFound } from '@dcr/domain';
import { SERVICE_CONTEXT, ServiceContext } from '@dcr/service-kit';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';

/** Where the browser scripts are built (`npm run build`): libs/client-sdk/dist, the same from src/ and dist/. */
export function clientScriptsDir(): string {
  return resolve(__dirname, '..', '..', '..', '..', 'libs', 'client-sdk', 'dist');
}

/** Overrides the folder the scripts are read from (tests). */
export const CLIENT_SCRIPTS_DIR = Symbol('CLIENT_SCRIPTS_DIR');

/** The scripts a page loads explicitly, and where: every module is also served beside them. */
export const ENTRY_POINTS = {
  'service.js': '/sdk/v1/service.js',
  'service-field.js': '/sdk/v1/service-field.js',
  'service-decision.js': '/js/v1/service-decision.js',
} as const;
/** Every module is served under both folders, so relative imports resolve from either entry. */
export const SCRIPT_FOLDERS = ['/sdk/v1/', '/js/v1/'] as const;

export interface ClientScript {
  name: string;
  body: Buffer;
  gzip: Buffer;
  brotli: Buffer;
  /** Subresource Integrity value of the bytes: `sha384-<base64>`. */
  integrity: string;
  /** Strong validator of the bytes (per encoding, suffixed). */
  etag: string;
  /** The sibling modules it imports. */
  imports: string[];
}

const MODULE_NAME = /^[a-z][a-z0-9-]*\.js$/;
const IMPORT = /\b(?:import|export)\s*(?:[\w*{}\s,$]+from\s*)?['"]([^'"]+)['"]/g;

/** The module specifiers of an ES module's static imports and re-exports. */
export function importsOf(source: string): string[] {
  return [...new Set(Array.from(source.matchAll(IMPORT), (match) => match[1]))];
}

/**
 * Reads the built scripts once: bytes, compressed copies, integrity and imports. Refuses a module that
 * imports anything but a sibling that is served too (no bare specifier, no other folder).
 */
export function loadClientScripts(dir: string): Map<string, ClientScript> {
  if (!existsSync(dir)) throw new Error(`The client scripts are not built (${dir} is missing): run npm run build`);
  const names = readdirSync(dir).filter((name) => MODULE_NAME.test(name)).sort();
  for (const entry of Object.keys(ENTRY_POINTS)) {
    if (!names.includes(entry)) throw new Error(`The client scripts in ${dir} lack ${entry}: run npm run build`);
  }
  const scripts = new Map<string, ClientScript>();
  for (const name of names) {
    const body = readFileSync(join(dir, name));
    const imports = importsOf(body.toString('utf8')).map((specifier) => {
      const sibling = specifier.startsWith('./') ? specifier.slice(2) : '';
      if (!names.includes(sibling)) throw new Error(`The client script ${name} imports ${specifier}, which is not a served sibling module`);
      return sibling;
    });
    const digest = createHash('sha384').update(body).digest('base64');
    scripts.set(name, {
      name,
      body,
      gzip: gzipSync(body, { level: 9 }),
      brotli: brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }),
      integrity: `sha384-${digest}`,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      imports,
    });
  }
  return scripts;
}

/** Every module a script loads: itself and its imports, transitively, in load order. */
export function modulesLoadedBy(name: string, scripts: Map<string, ClientScript>): string[] {
  const loaded: string[] = [];
  const visit = (current: string) => {
    if (loaded.includes(current)) return;
    loaded.push(current);
    for (const next of scripts.get(current)?.imports ?? []) visit(next);
  };
  visit(name);
  return loaded;
}

/**
 * The browser client scripts (libs/client-sdk), read once when the gateway starts. Without a build
 * they are answered 503 naming the fix; in production the gateway refuses to start without them.
 */
@Injectable()
export class ClientScripts {
  private readonly scripts: Map<string, ClientScript>;
  private readonly missing?: string;

  constructor(@Inject(SERVICE_CONTEXT) context: ServiceContext, @Optional() @Inject(CLIENT_SCRIPTS_DIR) dir?: string) {
    try {
      this.scripts = loadClientScripts(dir ?? clientScriptsDir());
    } catch (error) {
      if (context.env.NODE_ENV === 'production') throw error;
      this.scripts = new Map();
      this.missing = (error as Error).message;
      context.logger.warn({ reason: this.missing }, 'client scripts are not served');
    }
  }

  get(name: string): ClientScript {
    if (this.missing) throw new DomainError('service_unavailable', this.missing);
    const script = this.scripts.get(name);
    if (!script) throw notFound('Client script');
    return script;
  }

  /** What integrators pin: each file's integrity, size and imports, and what each entry point loads. */
  manifest(baseUrl: string) {
    if (this.missing) throw new DomainError('service_unavailable', this.missing);
    const url = (folder: string, name: string) => `${baseUrl}${folder}${name}`;
    return {
      version: 'v1',
      entry_points: Object.fromEntries(
        Object.entries(ENTRY_POINTS).map(([name, path]) => {
          const folder = path.slice(0, path.length - name.length);
          return [name, { url: `${baseUrl}${path}`, loads: modulesLoadedBy(name, this.scripts).map((module) => ({ url: url(folder, module), integrity: this.scripts.get(module)!.integrity })) }];
        }),
      ),
      files: Array.from(this.scripts.values(), (script) => ({
        name: script.name,
        urls: SCRIPT_FOLDERS.map((folder) => url(folder, script.name)),
        integrity: script.integrity,
        bytes: script.body.length,
        gzip_bytes: script.gzip.length,
        imports: script.imports,
      })),
    };
  }
}
