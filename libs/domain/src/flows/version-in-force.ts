import { FieldIssue } from '../errors';

/** A version of a flow that was activated, and when (ms since the epoch). Drafts have none. */
export interface FlowActivation {
  version: number;
  activatedAt: number;
}

const byVersion = (activations: readonly FlowActivation[]) => [...activations].sort((a, b) => a.version - b.version);

/**
 * The version of a flow in force at `capturedAt` (ms): the newest one activated at or before it, or
 * the first one activated when the capture precedes every activation (history from before the
 * service, which the first version governs). An activated version supersedes the one before it,
 * which keeps governing what it collected. Undefined when no version was activated.
 */
export function versionInForce(activations: readonly FlowActivation[], capturedAt: number): number | undefined {
  const sorted = byVersion(activations);
  let inForce = sorted[0]?.version;
  for (const activation of sorted) if (activation.activatedAt <= capturedAt) inForce = activation.version;
  return inForce;
}

/**
 * Why a record captured at `capturedAt` (ms) cannot say it was decided against `version`: that
 * version was never activated (a draft, or none), or it was activated after the capture (it cannot
 * have been shown before it existed), except the first version, which governs history from before
 * the service. Undefined when it can.
 */
export function pinnedVersionIssue(activations: readonly FlowActivation[], version: number, capturedAt: number): FieldIssue | undefined {
  const sorted = byVersion(activations);
  const pinned = sorted.find((activation) => activation.version === version);
  if (!pinned) {
    return { field: 'flow_version', reason: `is not an activated version of this flow (activated: ${sorted.map((activation) => activation.version).join(', ') || 'none'})` };
  }
  if (pinned !== sorted[0] && capturedAt < pinned.activatedAt) {
    return {
      field: 'captured_at',
      reason: `is before version ${version} of the flow was activated (${new Date(pinned.activatedAt).toISOString()}): it cannot have been shown then; version ${versionInForce(sorted, capturedAt)} was in force`,
    };
  }
  return undefined;
}
