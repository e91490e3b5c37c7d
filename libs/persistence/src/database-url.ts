/**
 * One PostgreSQL database per country: `<database>_<cc>` on the server DATABASE_URL names. The
 * embedded default and the distributed mode both derive the country's database this way.
 */
export function countryDatabaseUrl(serverUrl: string, country: string): string {
  const url = new URL(serverUrl);
  const base = decodeURIComponent(url.pathname.replace(/^\//, '')) || 'dcr';
  url.pathname = `/${base}_${country.toLowerCase()}`;
  return url.toString();
}

export function databaseNameOf(databaseUrl: string): string {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ''));
  if (!name) throw new Error(`DATABASE_URL names no database: ${redactDatabaseUrl(databaseUrl)}`);
  return name;
}

/** The same URL pointing at the server's maintenance database, for CREATE/DROP DATABASE. */
export function maintenanceUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  return url.toString();
}

export function redactDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '<unparseable url>';
  }
}
