import { readFileSync } from 'node:fs';
import { AuditExport, ExportedAnchor, UNPROVEN_GRACE_MS, verifyAuditExport, WitnessConfiguration } from './verify-export';

const USAGE = `Usage: dcr-audit-verify <export.json> --keys <witness-configuration.json> [--keys <another.json> ...]
                        [--anchors <anchors.json>] [--min-witnesses <n>] [--grace-minutes <n>] [--json]

  <export.json>   GET /api/v1/applications/<id>/audit/export
  --keys          /.well-known/witness-configuration of the log's country and of each witness
                  (for the default peer witnesses: the other countries' documents)
  --anchors       GET /api/v1/anchors (its "data" array, or the whole page)
  --min-witnesses valid witness cosignatures the anchor needs (default 1)
  --grace-minutes how long before the anchor was made an entry may have occurred and not be proven
                  (appended late; default 60): an older entry without its proof is refused
  --json          print the report as JSON

Exit status: 0 when everything verifies, 1 when something does not, 2 on a usage error.`;

function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** Runs the verifier on files; returns the process exit status. */
export function main(args: string[], out: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): number {
  let exportPath: string | undefined;
  const keyPaths: string[] = [];
  let anchorsPath: string | undefined;
  let minWitnesses = 1;
  let graceMinutes = UNPROVEN_GRACE_MS / 60_000;
  let json = false;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (arg === '--help' || arg === '-h') {
      out(USAGE);
      return 0;
    } else if (arg === '--keys' || arg === '--anchors' || arg === '--min-witnesses' || arg === '--grace-minutes') {
      const value = args[++i];
      if (!value) {
        out(`${arg} needs a value\n\n${USAGE}`);
        return 2;
      }
      if (arg === '--keys') keyPaths.push(value);
      else if (arg === '--anchors') anchorsPath = value;
      else if (arg === '--grace-minutes') graceMinutes = /^\d+$/.test(value) ? Number(value) : NaN;
      else minWitnesses = /^\d+$/.test(value) ? Number(value) : NaN;
    } else if (arg === '--json') json = true;
    else if (!arg.startsWith('--') && !exportPath) exportPath = arg;
    else {
      out(`unknown argument ${arg}\n\n${USAGE}`);
      return 2;
    }
  }
  if (!exportPath || keyPaths.length === 0 || keyPaths.some((path) => !path) || !Number.isInteger(minWitnesses) || minWitnesses < 0 || !Number.isInteger(graceMinutes)) {
    out(USAGE);
    return 2;
  }
  let report;
  try {
    const exported = readJson(exportPath) as AuditExport;
    const configurations = keyPaths.map((path) => readJson(path) as WitnessConfiguration);
    const anchorsDocument = anchorsPath ? (readJson(anchorsPath) as { data?: ExportedAnchor[] } | ExportedAnchor[]) : undefined;
    const anchors = anchorsDocument === undefined ? undefined : Array.isArray(anchorsDocument) ? anchorsDocument : (anchorsDocument.data ?? []);
    report = verifyAuditExport(exported, configurations, { minWitnesses, anchors, unprovenGraceMs: graceMinutes * 60_000 });
  } catch (error) {
    out(`cannot verify: ${(error as Error).message}`);
    return 2;
  }
  if (json) {
    out(JSON.stringify(report, null, 2));
  } else {
    out(`${report.valid ? 'VALID' : 'INVALID'}: ${report.entries} entries of ${report.application_id} in ${report.country}, ${report.anchored_entries} proven in anchor ${report.anchor?.id ?? '(none)'}`);
    if (report.anchor) out(`anchor tree_size ${report.anchor.tree_size}, signed by ${report.anchor.signed_by ?? 'NO PUBLISHED KEY'}, witnesses: ${report.anchor.witnesses.join(', ') || 'none'}`);
    if (report.first_bad_entry) {
      out(`first bad entry: seq ${report.first_bad_entry.seq} (${report.first_bad_entry.entry_id}): ${report.first_bad_entry.reason}`);
      out(`untrusted from there on: ${report.untrusted_entry_ids.length} entries`);
    }
    for (const finding of report.findings) out(`  - ${JSON.stringify(finding)}`);
  }
  return report.valid ? 0 : 1;
}
