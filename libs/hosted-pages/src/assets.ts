import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
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

/**
 * Each asset's bytes as this process read them first: what the gateway serves, and what the pages'
 * integrity values are computed from. Read once, so that a file changed under a running process
 * (a rebuild in development) cannot give pages an integrity its served bytes do not have, which made
 * the browser refuse the script on every page.
 */
const assetBytes = new Map<string, Buffer>();
const integrityCache = new Map<string, string>();

/** Subresource Integrity value (`sha384-<base64>`) of the asset's bytes as served (readAsset). */
export function assetIntegrity(fileName: string): string {
  let integrity = integrityCache.get(fileName);
  if (integrity === undefined) {
    integrity = `sha384-${createHash('sha384').update(readAsset(fileName)).digest('base64')}`;
    integrityCache.set(fileName, integrity);
  }
  return integrity;
}

/** The bytes of an asset (for a server that does not serve the folder directly), as first read by this process. */
export function readAsset(fileName: string): Buffer {
  let bytes = assetBytes.get(fileName);
  if (bytes === undefined) {
    bytes = readFileSync(assetFile(fileName));
    assetBytes.set(fileName, bytes);
  }
  return bytes;
}

export function assetUrl(assetBase: string, fileName: AssetFile): string {
  return `${assetBase.replace(/\/+$/, '')}/${fileName}`;
}
