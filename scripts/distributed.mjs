#!/usr/bin/env node
// Distributed mode on one machine: starts each service as its own process against the NATS and PostgreSQL
// named by NATS_URL and DATABASE_URL (defaults: the local servers), forwards their output, and stops them all
// on Ctrl-C. Set INTERVENTIONS_REPLICAS / INGEST_REPLICAS / POLICIES_REPLICAS / STATS_REPLICAS / MCP_GATEWAY_REPLICAS / EVALS_REPLICAS / REPLAY_REPLICAS to run more than one process of a service.
import { spawn } from 'node:child_process';
import pg from 'pg';

const env = {
  ...process.env,
  NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/agp',
};
const replicas = (name) => Number(process.env[`${name.toUpperCase()}_REPLICAS`] ?? 1);
const children = [];
const start = (name, extra = {}) => {
  const child = spawn(process.execPath, ['--enable-source-maps', `services/${name}/dist/main.js`], { env: { ...env, ...extra }, stdio: ['ignore', 'inherit', 'inherit'] });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`[distributed] ${name} exited (${code ?? signal}); stopping the others`);
      stopAll(1);
    }
  });
  children.push(child);
};
let stopping = false;
const stopAll = (code = 0) => {
  stopping = true;
  for (const c of children) c.kill('SIGTERM');
  setTimeout(() => process.exit(code), 3000).unref();
  Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.on('exit', r))))).then(() => process.exit(code));
};
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

// Create the database when it does not exist yet (the services create their tables themselves).
{
  const target = new URL(env.DATABASE_URL);
  const name = decodeURIComponent(target.pathname.slice(1)) || 'postgres';
  const admin = new URL(env.DATABASE_URL);
  admin.pathname = '/postgres';
  const c = new pg.Client({ connectionString: admin.toString() });
  try {
    await c.connect();
    const { rows } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rows.length === 0) {
      await c.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      console.error(`[distributed] created database ${name}`);
    }
  } catch (err) {
    console.error(`[distributed] cannot reach PostgreSQL at ${admin.host}: ${err.message}`);
    process.exit(1);
  } finally {
    await c.end().catch(() => {});
  }
}

// Each service gets its own ops port (health, readiness, metrics) on OPS_HOST, the gateway serves PORT on HOST; both
// listen on loopback (127.0.0.1) unless those are set.
let opsPort = Number(process.env.AGP_OPS_PORT_BASE ?? 9460);
for (let i = 0; i < replicas('interventions'); i++) start('interventions', { OPS_PORT: String(opsPort++) });
for (let i = 0; i < replicas('ingest'); i++) start('ingest', { OPS_PORT: String(opsPort++) });
for (let i = 0; i < replicas('policies'); i++) start('policies', { OPS_PORT: String(opsPort++) });
for (let i = 0; i < replicas('stats'); i++) start('stats', { OPS_PORT: String(opsPort++) });
for (let i = 0; i < replicas('mcp_gateway'); i++) start('mcp-gateway', { OPS_PORT: String(opsPort++) });
for (let i = 0; i < replicas('evals'); i++) start('evals', { OPS_PORT: String(opsPort++) });
for (let i = 0; i < replicas('replay'); i++) start('replay', { OPS_PORT: String(opsPort++) });
start('gateway');
