// node-redis (the `redis` package with @redis/bloom) runs its own BF.* calls against the
// module and checks what it gets back: node bloom.mjs PORT PROTOCOL (2 or 3).
// Exits 0 when every check holds; prints the failed check and exits 1 otherwise.
import assert from 'node:assert/strict';
import { createClient, RESP_TYPES } from 'redis';

const [port, protocol] = process.argv.slice(2).map(Number);
const client = createClient({ socket: { host: '127.0.0.1', port }, RESP: protocol });
client.on('error', (e) => { console.error(e); process.exit(1); });
await client.connect();
const bf = client.bf;

try {
  assert.equal(await bf.reserve('f', 0.01, 1000, { EXPANSION: 4 }), 'OK');
  assert.equal(await bf.add('f', 'a'), true);
  assert.equal(await bf.add('f', 'a'), false);
  assert.deepEqual(await bf.mAdd('f', ['a', 'b', 'c']), [false, true, true]);
  assert.equal(await bf.exists('f', 'b'), true);
  assert.equal(await bf.exists('f', 'nope'), false);
  assert.deepEqual(await bf.mExists('f', ['a', 'nope', 'c']), [true, false, true]);
  assert.deepEqual(await bf.insert('g', ['x', 'y'], { CAPACITY: 100, ERROR: 0.001, EXPANSION: 2 }),
                   [true, true]);
  assert.equal(await bf.card('f'), 3);
  assert.equal(await bf.card('missing'), 0);

  // BF.INFO: a plain object with RedisBloom's labels, under either protocol.
  const info = await bf.info('f');
  assert.equal(typeof info, 'object');
  assert.ok(!Array.isArray(info));
  assert.equal(info['Capacity'], 1000);
  assert.equal(info['Number of filters'], 1);
  assert.equal(info['Number of items inserted'], 3);
  assert.equal(info['Expansion rate'], 4);
  assert.ok(info['Size'] > 0);

  // A full non-scaling filter: the error in the array where the item was.
  await bf.reserve('n', 0.01, 2, { NONSCALING: true });
  const full = await bf.mAdd('n', ['1', '2', '3']);
  assert.equal(full.length, 3);
  assert.deepEqual(full.slice(0, 2), [true, true]);
  if (protocol === 3) {
    assert.ok(full[2] instanceof Error && /non scaling filter is full/.test(full[2].message));
  } else {
    assert.equal(full[2], false); // node-redis maps every non-1 element to false
  }
  await assert.rejects(bf.add('n', '4'), /non scaling filter is full/);
  await assert.rejects(bf.reserve('f', 0.01, 10), /item exists/);

  // SCANDUMP / LOADCHUNK with binary chunks, as the client's own tests do.
  const binary = client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  const chunks = [];
  for (let it = 0; ;) {
    const { iterator, chunk } = await binary.bf.scanDump('f', it);
    if (iterator === 0) break;
    chunks.push([iterator, chunk]);
    it = iterator;
  }
  assert.ok(chunks.length >= 1);
  for (const [iterator, chunk] of chunks) {
    assert.equal(await binary.bf.loadChunk('copy', iterator, chunk), 'OK');
  }
  assert.deepEqual(await bf.mExists('copy', ['a', 'b', 'c', 'nope']), [true, true, true, false]);
  assert.deepEqual(await bf.info('copy'), info);
} catch (e) {
  console.error(e);
  process.exitCode = 1;
} finally {
  await client.quit();
}
