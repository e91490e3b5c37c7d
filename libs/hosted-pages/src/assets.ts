import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The files of `assets/` the gateway serves (e.g. under `/assets/hosted/v1/`). */
export const ASSET_FILES = ['participant.js', 'participant.css', 'consent-field.css'] as const;
export type AssetFile = (typeof ASSET_FILES)[number];

/** Where the pages expect the assets unless told otherwise. */
export const DEFAULT_ASSET_BASE = '/assets/hosted/v1';

/** Content types for serving the assets. */
export const ASSET_CONTENT_TYPES: Readonly<Record<AssetFile, string>> = {
  'participant.js': 'text/javascript; charset=utf-8',
  'participant.css': 'text/css; charset=utf-8',
  'consent-field.css': 'text/css; charset=utf-8',
};

/** Absolute path of `libs/hosted-pages/assets` (the same from `src/` and from `dist/`). */
export function assetsDir(): string {
  return resolve(__dirname, '..', 'assets');
}

function assetFile(fileName: string): string {
  if (!(ASSET_FILES as readonly string[]).includes(fileName)) throw new Error(`Unknown hosted-pages asset: ${fileName}`);
  return join(assetsDir(), fileName);
}

const integrityCache = new Map<string, { stamp: string; integrity: string }>();

/** Subresource Integrity value (`sha384-<base64>`) of an asset's current bytes. */
export function assetIntegrity(fileName: string): string {
  const file = assetFile(fileName);
  const stat = statSync(file);
  const stamp = `${stat.size}:${stat.mtimeMs}`;
  const cached = integrityCache.get(fileName);
  if (cached && cached.stamp === stamp) return cached.integrity;
  const integrity = `sha384-${createHash('sha384').update(readFileSync(file)).digest('base64')}`;
  integrityCache.set(fileName, { stamp, integrity });
  return integrity;
}

/** The bytes of an asset (for a server that does not serve the folder directly). */
export function readAsset(fileName: string): Buffer {
  return readFileSync(assetFile(fileName));
}

export function assetUrl(assetBase: string, fileName: AssetFile): string {
  return `${assetBase.replace(/\/+$/, '')}/${fileName}`;
}
