import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import {
  Cosigner,
  cosignerFromSeed,
  formatCosignatureResponse,
  NoteVerifier,
  openNote,
  parseAddCheckpointRequest,
  parseCheckpoint,
  parseNote,
  verifyConsistency,
} from '@dcr/transparency';
import { randomBytes } from 'node:crypto';

/**
 * A small external witness speaking C2SP tlog-witness over HTTP, built on the same library, for
 * testing the log's client side: it records every request it gets and keeps the latest cosigned
 * checkpoint per origin in memory.
 */
export class TestTlogWitness {
  readonly cosigner: Cosigner;
  readonly requests: Array<{ oldSize: number; proofLength: number; size: number; status: number }> = [];
  private readonly state = new Map<string, { size: number; root: Buffer }>();
  private server?: Server;
  url = '';

  constructor(
    name: string,
    private readonly logKey: () => NoteVerifier,
  ) {
    this.cosigner = cosignerFromSeed(name, randomBytes(32));
  }

  /** Pretends the witness already cosigned `size` (with a root it cannot check), to exercise the 409 retry. */
  presetSize(origin: string, size: number, root: Buffer): void {
    this.state.set(origin, { size, root });
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const answer = this.handle(body);
        response.writeHead(answer.status, { 'content-type': answer.type });
        response.end(answer.body);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/add-checkpoint`;
  }

  private handle(body: string): { status: number; type: string; body: string } {
    const text = (status: number, message: string, type = 'text/plain') => {
      return { status, type, body: message };
    };
    let request;
    let checkpoint;
    try {
      request = parseAddCheckpointRequest(body);
      checkpoint = parseCheckpoint(parseNote(request.checkpointNote).text);
    } catch {
      return text(400, 'malformed\n');
    }
    const record = (status: number) => this.requests.push({ oldSize: request.oldSize, proofLength: request.consistencyProof.length, size: checkpoint.size, status });
    try {
      openNote(request.checkpointNote, [this.logKey()]);
    } catch {
      record(403);
      return text(403, 'unknown key\n');
    }
    const known = this.state.get(checkpoint.origin);
    const knownSize = known?.size ?? 0;
    if (request.oldSize !== knownSize) {
      record(409);
      return text(409, `${knownSize}\n`, 'text/x.tlog.size');
    }
    if (known && !(known.size === 0 || verifyConsistency(known.size, checkpoint.size, request.consistencyProof, known.root, checkpoint.rootHash))) {
      record(422);
      return text(422, 'bad proof\n');
    }
    this.state.set(checkpoint.origin, { size: checkpoint.size, root: checkpoint.rootHash });
    record(200);
    return text(200, formatCosignatureResponse([this.cosigner.cosign(parseNote(request.checkpointNote).text, Math.floor(Date.now() / 1000))]));
  }

  async close(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
