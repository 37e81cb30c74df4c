/**
 * A service process for packages/bus/test/killed-responder.int.test.ts (run with `node --import tsx`): the stats
 * service's subjects on a PrefixedNatsServer (NATS_URL, prefix AGP_SUBJECT_PREFIX), where `runs.get` takes the request,
 * prints `took <run id>` and never answers, as a process killed in the middle of its work leaves it. Prints
 * `listening` once its subscriptions are confirmed.
 */
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { PrefixedNatsServer, serveRpc, type WireHandlers } from '../src/index.js';

const nothing = () => ({}) as never;
const handlers: WireHandlers<'stats'> = {
  'runs.get': (_ctx, { path }) => {
    process.stdout.write(`took ${path.id}\n`);
    return new Promise<never>(() => {});
  },
  'stats.agent': nothing,
  'stats.summary': nothing,
  'stats.daily': nothing,
  'stats.estimation-accuracy': nothing,
  'runs.list': nothing,
  'ledger.export-page': nothing,
  'stats.retry-projection-dead-letter': nothing,
};
const server = new PrefixedNatsServer({ servers: process.env.NATS_URL!, prefix: process.env.AGP_SUBJECT_PREFIX!, queue: 'stats' });
const app = await NestFactory.createMicroservice(serveRpc('stats', handlers, { error: () => {} }), { strategy: server, logger: false });
await app.listen();
process.stdout.write('listening\n');
