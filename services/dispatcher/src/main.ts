import { runMain } from '@platform/shared/main';
import { loadDispatcherConfig } from './config.ts';
import { startDispatcherService } from './service.ts';

runMain('dispatcher', () => startDispatcherService(loadDispatcherConfig()));
