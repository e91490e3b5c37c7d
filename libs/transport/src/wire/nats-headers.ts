import { headers as createNatsHeaders, MsgHdrs } from 'nats';
import { TransportHeaders } from './headers';

/** Both sides of the NATS transport map headers the same way: names lower-cased, one value each. */
export function toNatsHeaders(headers: TransportHeaders): MsgHdrs | undefined {
  const entries = Object.entries(headers);
  if (entries.length === 0) return undefined;
  const result = createNatsHeaders();
  for (const [name, value] of entries) result.set(name, value);
  return result;
}

export function readNatsHeaders(source: MsgHdrs | undefined): TransportHeaders {
  const headers: TransportHeaders = {};
  if (!source) return headers;
  for (const name of source.keys()) headers[name.toLowerCase()] = source.get(name);
  return headers;
}
