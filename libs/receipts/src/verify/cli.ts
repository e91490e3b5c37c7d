import { readFile } from 'node:fs/promises';
import type { JWK } from 'jose';
import { verifySignedReceipt } from './verify-signed-receipt';

/** Where the CLI writes; the bin passes nothing and gets the process streams. */
export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processOutput: CliOutput = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

export const USAGE = `Usage: dcr-receipt-verify <signed-receipt.json> --jwks <jwks.json>
                          [--keys <witness-configuration.json>] [--json]

Verifies a signed receipt ({"payload": ..., "signature": "<protected>..<signature>"}) offline, with
the keys from the given files only; nothing is fetched. --keys adds the key history of the
witness configuration, so receipts signed before a key rotation still verify. Either file may be
given alone.

Exit status: 0 valid, 1 invalid, 2 usage or file error.
`;

interface CliOptions {
  receiptPath: string;
  jwksPath?: string;
  keysPath?: string;
  json: boolean;
}

class UsageError extends Error {}

/** `dcr-receipt-verify`: prints `VALID (kid …, alg …)` or `INVALID: <reason>`; exit 0, 1, or 2. */
export async function main(args: string[], out: CliOutput = processOutput): Promise<number> {
  let options: CliOptions | 'help';
  try {
    options = parseArguments(args);
  } catch (error) {
    out.stderr(`dcr-receipt-verify: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (options === 'help') {
    out.stdout(USAGE);
    return 0;
  }

  let jwks: unknown;
  let witnessConfiguration: unknown;
  let receiptText: string;
  try {
    jwks = options.jwksPath === undefined ? undefined : await readJson(options.jwksPath);
    witnessConfiguration = options.keysPath === undefined ? undefined : await readJson(options.keysPath);
    receiptText = await readText(options.receiptPath);
  } catch (error) {
    out.stderr(`dcr-receipt-verify: ${(error as Error).message}\n`);
    return 2;
  }

  let signed: unknown;
  try {
    signed = JSON.parse(receiptText);
  } catch (error) {
    return report(out, options.json, {
      valid: false,
      code: 'malformed',
      reason: `${options.receiptPath} is not JSON: ${(error as Error).message}`,
    });
  }
  const result = await verifySignedReceipt(signed, { jwks: jwks as { keys: JWK[] } | undefined, witnessConfiguration });
  return report(out, options.json, result);
}

function report(
  out: CliOutput,
  json: boolean,
  result: { valid: true; kid: string; alg: string } | { valid: false; code: string; reason: string },
): number {
  if (json) out.stdout(`${JSON.stringify(result)}\n`);
  else if (result.valid) out.stdout(`VALID (kid ${result.kid}, alg ${result.alg})\n`);
  else out.stdout(`INVALID: ${result.reason}\n`);
  return result.valid ? 0 : 1;
}

function parseArguments(args: string[]): CliOptions | 'help' {
  const positional: string[] = [];
  let jwksPath: string | undefined;
  let keysPath: string | undefined;
  let json = false;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    // `--jwks=path` as well as `--jwks path`.
    const equals = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = equals === -1 ? arg : arg.slice(0, equals);
    const inlineValue = equals === -1 ? undefined : arg.slice(equals + 1);
    const value = (): string => {
      const next = inlineValue ?? args[(i += 1)];
      if (next === undefined || next === '') throw new UsageError(`${flag} needs a file path`);
      return next;
    };
    switch (flag) {
      case '-h':
      case '--help':
        return 'help';
      case '--jwks':
        if (jwksPath !== undefined) throw new UsageError('--jwks was given twice');
        jwksPath = value();
        break;
      case '--keys':
        if (keysPath !== undefined) throw new UsageError('--keys was given twice');
        keysPath = value();
        break;
      case '--json':
        if (inlineValue !== undefined) throw new UsageError('--json takes no value');
        json = true;
        break;
      default:
        if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}`);
        positional.push(arg);
    }
  }
  if (positional.length === 0) throw new UsageError('the signed receipt file is missing');
  if (positional.length > 1) throw new UsageError(`one signed receipt at a time (got ${positional.length})`);
  if (jwksPath === undefined && keysPath === undefined) {
    throw new UsageError('give the keys: --jwks <jwks.json> and/or --keys <witness-configuration.json>');
  }
  return { receiptPath: positional[0], jwksPath, keysPath, json };
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

async function readJson(path: string): Promise<unknown> {
  const text = await readText(path);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${path} is not JSON: ${(error as Error).message}`);
  }
}
