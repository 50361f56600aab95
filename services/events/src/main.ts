import { runMain } from '@platform/shared/main';
import { loadEventsConfig } from './config.ts';
import { startEventsService } from './service.ts';

runMain('events', () => startEventsService(loadEventsConfig()));
