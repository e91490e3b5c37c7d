import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Captures from the consent field: the render proof's nonce (unique, so a rendering captures once)
 * and the rendering evidence that goes into the record's receipt.
 */
export class AddCaptureRendering1764700000000 implements MigrationInterface {
  name = 'AddCaptureRendering1764700000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "decisions"."captures" ADD "render_nonce" text`);
    await runner.query(`ALTER TABLE "decisions"."captures" ADD "rendering_evidence" jsonb`);
    await runner.query(`CREATE UNIQUE INDEX "UQ_captures_render_nonce" ON "decisions"."captures" ("render_nonce") WHERE "render_nonce" IS NOT NULL`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX "decisions"."UQ_captures_render_nonce"`);
    await runner.query(`ALTER TABLE "decisions"."captures" DROP COLUMN "rendering_evidence"`);
    await runner.query(`ALTER TABLE "decisions"."captures" DROP COLUMN "render_nonce"`);
  }
}
