import { randomBytes } from 'node:crypto';
import { dropDatabase, ensureDatabase } from '@dcr/persistence';

/** The PostgreSQL server integration tests use: CI's, at 127.0.0.1:5432 with trust auth. */
export function testServerUrl(): string {
  return process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

export function testNatsUrl(): string {
  return process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh database of its own for one test file, so files run in parallel without sharing rows. */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `t_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(5).toString('hex')}`;
  const url = new URL(testServerUrl());
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  await ensureDatabase(databaseUrl);
  return { url: databaseUrl, drop: () => dropDatabase(databaseUrl) };
}

/** A random lower-case subject prefix standing in for a country code, isolating a test's NATS traffic. */
export function uniquePrefix(label = 't'): string {
  return `${label}${randomBytes(4).toString('hex')}`;
}
