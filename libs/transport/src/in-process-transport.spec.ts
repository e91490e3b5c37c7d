import { InProcessClient } from './client/in-process-client';
import { InProcessBus } from './in-process/in-process-bus';
import { InProcessServer } from './server/in-process-server';
import { describeTransportContract } from './testing/transport-contract';

describeTransportContract('in-process', () => {
  const bus = new InProcessBus();
  return {
    createServer: (options) => new InProcessServer({ ...options, bus }),
    createClient: (options) => new InProcessClient({ ...options, bus }),
  };
});
