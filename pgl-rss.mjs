import { PGlite } from '@electric-sql/pglite';
const rss = () => Math.round(process.memoryUsage().rss/1048576);
const mem = Number(process.argv[3]||0);
const db = await PGlite.create({ ...(process.argv[2]!=='-' ? { dataDir: process.argv[2] } : {}), ...(mem? {initialMemory: mem*1048576}:{}) });
await db.query('select 1');
if (process.argv[4]) { await db.exec("ALTER SYSTEM SET shared_buffers = '16MB'"); }
await new Promise(r=>setTimeout(r,2000));
console.log('mem', mem, 'idle', rss(), (await db.query("show shared_buffers")).rows);
await db.close();
