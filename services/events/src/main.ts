import { runMain } from '@platform/shared/main';
import { withTracing } from '@platform/shared/tracing/start';
import { loadEventsConfig } from './config.ts';
import { startEventsService } from './service.ts';

runMain('events', withTracing('events', loadEventsConfig, startEventsService));
