import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';

type Lookup = (target: Function, schema: string, always: boolean, strict: boolean, groups?: string[]) => ValidationMetadata[];
type Grouping = (metadata: ValidationMetadata[]) => Record<string, ValidationMetadata[]>;

let installed = false;

/**
 * class-validator looks a class's rules up on every `validate()` by scanning every decorated class
 * of the process for ancestors (typestack/class-validator#2686): with the few hundred message and
 * DTO classes here that scan was the largest single cost of validating a request or an RPC payload.
 * A class's rules, its own and inherited, are all registered when the class is defined (its
 * ancestors are defined before it), so the answer for a class never changes once it can be
 * validated: it is kept per class and per option set, and so is its grouping by property, which
 * class-validator rebuilds from that same list on every call (and only reads). Installed once per
 * process.
 */
export function cacheValidationMetadata(): void {
  if (installed) return;
  installed = true;
  const storage = getMetadataStorage() as unknown as { getTargetValidationMetadatas: Lookup; groupByPropertyName: Grouping };
  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  const groupings = new WeakMap<ValidationMetadata[], Record<string, ValidationMetadata[]>>();
  storage.groupByPropertyName = (metadata) => {
    let grouped = groupings.get(metadata);
    if (!grouped) groupings.set(metadata, (grouped = group(metadata)));
    return grouped;
  };
  const cache = new WeakMap<Function, Map<string, ValidationMetadata[]>>();
  storage.getTargetValidationMetadatas = (target, schema, always, strict, groups) => {
    let byOptions = cache.get(target);
    if (!byOptions) cache.set(target, (byOptions = new Map()));
    const key = `${schema}\u0000${always}\u0000${strict}\u0000${groups?.join('\u0001') ?? ''}`;
    let found = byOptions.get(key);
    if (!found) byOptions.set(key, (found = lookup(target, schema, always, strict, groups)));
    return found;
  };
}
