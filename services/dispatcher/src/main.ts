import { runMain } from '@platform/shared/main';
import { withTracing } from '@platform/shared/tracing/start';
import { loadDispatcherConfig } from './config.ts';
import { startDispatcherService } from './service.ts';

runMain('dispatcher', withTracing('dispatcher', loadDispatcherConfig, startDispatcherService));
