import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { SERVICE_CONTEXT } from '@dcr/service-kit';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import request from 'supertest';
import { AllExceptionsFilter } from '../src/http/all-exceptions.filter';
import { CLIENT_SCRIPTS_DIR, ClientScripts, importsOf, loadClientScripts } from '../src/sdk/client-scripts';
import { chooseEncoding, ClientScriptsController } from '../src/sdk/client-scripts.controller';

const FILES: Record<string, string> = {
  'service.js': "import { frame } from './service-frame.js';\nexport * from './service-http.js';\nexport class Service {}\nwindow.Service = Service;\n",
  'service-frame.js': "import { ServiceError } from './service-http.js';\nexport const frame = 1;\n",
  'service-http.js': 'export class ServiceError extends Error {}\n'.repeat(40),
  'service-field.js': "customElements.define('service-consent-field', class extends HTMLElement {});\n",
  'service-decision.js': "import { frame } from './service-frame.js';\ncustomElements.define('service-decision', class extends HTMLElement {});\n",
};

const sri = (text: string) => `sha384-${createHash('sha384').update(text).digest('base64')}`;

function scriptsFolder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'client-scripts-'));
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
  return dir;
}

async function gateway(dir: string, nodeEnv = 'test'): Promise<NestFastifyApplication> {
  const context = { env: { NODE_ENV: nodeEnv, COUNTRY: 'US', PUBLIC_BASE_URL: 'https://us.example.com' }, logger: pino({ level: 'silent' }) };
  @Module({
    controllers: [ClientScriptsController],
    providers: [ClientScripts, { provide: SERVICE_CONTEXT, useValue: context }, { provide: CLIENT_SCRIPTS_DIR, useValue: dir }],
  })
  class ProbeModule {}
  const app = await NestFactory.create<NestFastifyApplication>(ProbeModule, new FastifyAdapter(), { logger: false, abortOnError: false });
  app.useGlobalFilters(new AllExceptionsFilter(pino({ level: 'silent' })));
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

/** Serving the browser client scripts: headers, validators, encodings, the manifest, exact error bodies. */
describe('client scripts', () => {
  let dir: string;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    dir = scriptsFolder(FILES);
    app = await gateway(dir);
  });

  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves each entry point as a cacheable, CORS-readable ES module with its integrity', async () => {
    for (const [path, name] of [
      ['/sdk/v1/service.js', 'service.js'],
      ['/sdk/v1/service-field.js', 'service-field.js'],
      ['/js/v1/service-decision.js', 'service-decision.js'],
      ['/js/v1/service-frame.js', 'service-frame.js'],
    ]) {
      const response = await request(app.getHttpServer()).get(path).set('accept-encoding', 'identity');
      expect(response.status).toBe(200);
      expect(response.text).toBe(FILES[name]);
      expect(response.headers).toMatchObject({
        'content-type': 'text/javascript; charset=utf-8',
        'access-control-allow-origin': '*',
        'cache-control': 'public, max-age=31536000, immutable',
        'x-integrity': sri(FILES[name]),
        etag: expect.stringMatching(/^"[A-Za-z0-9_-]{27}"$/),
        vary: 'Accept-Encoding',
        'x-content-type-options': 'nosniff',
      });
      expect(response.headers['content-encoding']).toBeUndefined();
    }
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const first = await request(app.getHttpServer()).get('/sdk/v1/service.js').set('accept-encoding', 'identity');
    const again = await request(app.getHttpServer()).get('/sdk/v1/service.js').set('accept-encoding', 'identity').set('if-none-match', `W/"other", ${first.headers.etag}`);
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.etag).toBe(first.headers.etag);
    expect((await request(app.getHttpServer()).get('/sdk/v1/service.js').set('if-none-match', '"stale"')).status).toBe(200);
  });

  it('sends brotli or gzip when accepted; the integrity stays that of the decoded bytes', async () => {
    const plain = await request(app.getHttpServer()).get('/sdk/v1/service-http.js').set('accept-encoding', 'identity');
    for (const [accept, encoding] of [
      ['gzip, deflate, br', 'br'],
      ['gzip', 'gzip'],
      ['br;q=0, gzip', 'gzip'],
    ]) {
      const response = await request(app.getHttpServer()).get('/sdk/v1/service-http.js').set('accept-encoding', accept);
      expect(response.status).toBe(200);
      expect(response.headers['content-encoding']).toBe(encoding);
      expect(response.text).toBe(FILES['service-http.js']);
      expect(response.headers['x-integrity']).toBe(plain.headers['x-integrity']);
      expect(response.headers.etag).toBe(`${plain.headers.etag.slice(0, -1)}-${encoding}"`);
    }
    expect(chooseEncoding('identity')).toBeUndefined();
    expect(chooseEncoding(undefined)).toBeUndefined();
  });

  it('answers an unknown file with the error body', async () => {
    const response = await request(app.getHttpServer()).get('/sdk/v1/nothing.js');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ message: 'Client script was not found', code: 'not_found', request_id: expect.any(String) });
  });

  it('publishes a manifest with every file, its integrity and what each entry point loads', async () => {
    const response = await request(app.getHttpServer()).get('/sdk/v1/manifest.json');
    expect(response.status).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    const base = 'https://us.example.com';
    expect(response.body.version).toBe('v1');
    expect(response.body.entry_points['service.js']).toEqual({
      url: `${base}/sdk/v1/service.js`,
      loads: ['service.js', 'service-frame.js', 'service-http.js'].map((name) => ({ url: `${base}/sdk/v1/${name}`, integrity: sri(FILES[name]) })),
    });
    expect(response.body.entry_points['service-decision.js'].loads.map((m: { url: string }) => m.url)).toEqual(
      ['service-decision.js', 'service-frame.js', 'service-http.js'].map((name) => `${base}/js/v1/${name}`),
    );
    expect(response.body.entry_points['service-field.js'].loads).toEqual([{ url: `${base}/sdk/v1/service-field.js`, integrity: sri(FILES['service-field.js']) }]);
    const file = response.body.files.find((f: { name: string }) => f.name === 'service.js');
    expect(file).toEqual({
      name: 'service.js',
      urls: [`${base}/sdk/v1/service.js`, `${base}/js/v1/service.js`],
      integrity: sri(FILES['service.js']),
      bytes: Buffer.byteLength(FILES['service.js']),
      gzip_bytes: expect.any(Number),
      imports: ['service-frame.js', 'service-http.js'],
    });
    expect((await request(app.getHttpServer()).get('/js/v1/manifest.json')).body).toEqual(response.body);
  });

  it('refuses modules that are not self-contained', () => {
    expect(importsOf("import a from './a.js';\nexport { b } from \"./b.js\";\nimport './c.js';\nexport * from './d.js';")).toEqual(['./a.js', './b.js', './c.js', './d.js']);
    const bare = scriptsFolder({ ...FILES, 'service-frame.js': "import { html } from 'lit';\n" });
    const elsewhere = scriptsFolder({ ...FILES, 'service.js': "import x from '../other/x.js';\n" });
    const incomplete = scriptsFolder({ 'service.js': 'export {};\n' });
    try {
      expect(() => loadClientScripts(bare)).toThrow("service-frame.js imports lit, which is not a served sibling module");
      expect(() => loadClientScripts(elsewhere)).toThrow('service.js imports ../other/x.js');
      expect(() => loadClientScripts(incomplete)).toThrow('lack service-field.js: run npm run build');
    } finally {
      for (const folder of [bare, elsewhere, incomplete]) rmSync(folder, { recursive: true, force: true });
    }
  });

  it('answers 503 naming the fix when the scripts are not built, and refuses to start so in production', async () => {
    const missing = join(tmpdir(), 'client-scripts-never-built');
    const unbuilt = await gateway(missing);
    try {
      const response = await request(unbuilt.getHttpServer()).get('/sdk/v1/service.js');
      expect(response.status).toBe(503);
      expect(response.body).toEqual({ message: `The client scripts are not built (${missing} is missing): run npm run build`, code: 'service_unavailable', request_id: expect.any(String) });
    } finally {
      await unbuilt.close();
    }
    await expect(gateway(missing, 'production')).rejects.toThrow('run npm run build');
  });
});
