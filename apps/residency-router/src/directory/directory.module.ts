import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DirectoryController } from './directory.controller';
import { DirectoryEntry } from './directory-entry.entity';
import { DirectoryRepository } from './directory.repository';
import { DirectoryService } from './directory.service';

@Module({
  imports: [TypeOrmModule.forFeature([DirectoryEntry])],
  controllers: [DirectoryController],
  providers: [DirectoryRepository, DirectoryService],
})
export class DirectoryModule {}
