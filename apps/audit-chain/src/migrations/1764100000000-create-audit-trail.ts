import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateAuditTrail1764100000000 implements MigrationInterface {
  name = 'CreateAuditTrail1764100000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE "audit_chain"."entries" (
        "leaf_index" bigint NOT NULL,
        "entry_id" text NOT NULL,
        "source" text NOT NULL,
        "source_event_id" text NOT NULL,
        "application_id" text NOT NULL,
        "seq" bigint NOT NULL,
        "event_type" text NOT NULL,
        "actor" jsonb NOT NULL,
        "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "payload_digest" text NOT NULL,
        "prev_hash" text NOT NULL,
        "hash" text NOT NULL,
        "payload" jsonb NOT NULL,
        "appended_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_entries" PRIMARY KEY ("leaf_index")
      )`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_entries_entry_id" ON "audit_chain"."entries" ("entry_id")`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_entries_source_event" ON "audit_chain"."entries" ("source", "source_event_id")`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_entries_application_seq" ON "audit_chain"."entries" ("application_id", "seq")`);
    await runner.query(`
      CREATE TABLE "audit_chain"."chain_heads" (
        "application_id" text NOT NULL,
        "seq" bigint NOT NULL,
        "hash" text NOT NULL,
        CONSTRAINT "PK_chain_heads" PRIMARY KEY ("application_id")
      )`);
    await runner.query(`
      CREATE TABLE "audit_chain"."merkle_nodes" (
        "level" smallint NOT NULL,
        "idx" bigint NOT NULL,
        "hash" bytea NOT NULL,
        CONSTRAINT "PK_merkle_nodes" PRIMARY KEY ("level", "idx")
      )`);
    await runner.query(`
      CREATE TABLE "audit_chain"."anchors" (
        "id" text NOT NULL,
        "tree_size" bigint NOT NULL,
        "merkle_root" text NOT NULL,
        "origin" text NOT NULL,
        "checkpoint" text NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_anchors" PRIMARY KEY ("id")
      )`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_anchors_tree_size" ON "audit_chain"."anchors" ("tree_size")`);
    await runner.query(`
      CREATE TABLE "audit_chain"."witness_receipts" (
        "anchor_id" text NOT NULL,
        "witness" text NOT NULL,
        "signature" text NOT NULL,
        "cosignature" text NOT NULL,
        "signed_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_witness_receipts" PRIMARY KEY ("anchor_id", "witness")
      )`);
    await runner.query(`
      CREATE TABLE "audit_chain"."witness_positions" (
        "witness" text NOT NULL,
        "tree_size" bigint NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_witness_positions" PRIMARY KEY ("witness")
      )`);
    await runner.query(`
      CREATE TABLE "audit_chain"."witnessed_logs" (
        "origin" text NOT NULL,
        "verifier_key" text NOT NULL,
        "tree_size" bigint NOT NULL,
        "root_hash" text NOT NULL,
        "checkpoint" text NOT NULL,
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_witnessed_logs" PRIMARY KEY ("origin")
      )`);
    await runner.query(`
      CREATE TABLE "audit_chain"."published_keys" (
        "verifier_key" text NOT NULL,
        "purpose" text NOT NULL,
        "name" text NOT NULL,
        "key_id" text NOT NULL,
        "first_used_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "retired_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "PK_published_keys" PRIMARY KEY ("verifier_key")
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const table of ['published_keys', 'witnessed_logs', 'witness_positions', 'witness_receipts', 'anchors', 'merkle_nodes', 'chain_heads', 'entries']) {
      await runner.query(`DROP TABLE "audit_chain"."${table}"`);
    }
  }
}
