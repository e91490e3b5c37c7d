import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A removed allowed origin is kept, marked with when it was removed, so that the countries merge an
 * application's origins one by one (the later of an addition and a removal wins) instead of one
 * country's list replacing the other's (ConnectRepository.applySnapshot).
 */
export class AllowedOriginsKeepRemovals1765800000000 implements MigrationInterface {
  name = 'AllowedOriginsKeepRemovals1765800000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "gateway"."allowed_origins" ADD COLUMN "removed_at" TIMESTAMP WITH TIME ZONE`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DELETE FROM "gateway"."allowed_origins" WHERE "removed_at" IS NOT NULL`);
    await runner.query(`ALTER TABLE "gateway"."allowed_origins" DROP COLUMN "removed_at"`);
  }
}
