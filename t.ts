import { PGlite } from '@electric-sql/pglite';
let t = Date.now();
const db = new PGlite(); await db.waitReady; console.log('mem init', Date.now()-t);
await db.exec('create table x(a int primary key, b text); insert into x values (1, $$a$$)');
t = Date.now(); const dump = await db.dumpDataDir('none'); console.log('dump', Date.now()-t, dump.size);
t = Date.now(); const db2 = new PGlite({ loadDataDir: dump }); await db2.waitReady; console.log('load', Date.now()-t, (await db2.query('select * from x')).rows);
t = Date.now(); for (let i=0;i<2000;i++) await db2.query('select * from x where a = $1', [1]); console.log('2000 q', Date.now()-t);
t = Date.now(); for (let i=0;i<2000;i++) await db2.query('insert into x values ($1, $2)', [i+10, 'x']); console.log('2000 ins', Date.now()-t);
process.exit(0);
