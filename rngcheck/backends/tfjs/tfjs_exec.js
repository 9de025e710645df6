// TensorFlow.js's random ops behind rngcheck's exec protocol (docs/exec-protocol.md): numbers only, under the
// library's own convention "tfjs" (one rngcheck.numbers does not model: the property axis judges it).
//
// Written against @tensorflow/tfjs-core 4.22.0 with @tensorflow/tfjs-backend-cpu 4.22.0 (node 20); its random
// ops are JavaScript (an Alea generator seeded per call). Installed by `npm ci --prefix rngcheck/backends/tfjs`
// (scripts/setup.sh); run as `rngcheck run --backend 'exec:node rngcheck/backends/tfjs/tfjs_exec.js'`.
//
// 1. Seed and position (the property axis's rule 1): the op's `seed` is state word 4 (words 1-3 and 5 zero);
//    position c (counter word 0) is the (c + 1)-th call with that seed: tfjs's seeded ops keep no state, so
//    every position gives the same numbers.
// 2. Kinds: uniform float32 (tf.randomUniform, a range through minval/maxval), normal float32
//    (tf.randomNormal), truncated_normal float32 (tf.truncatedNormal), integers int32 (tf.randomUniformInt).
// 3. stdout carries only protocol messages: console.log (tfjs prints a hint on it) goes to stderr.
'use strict';

console.log = (...args) => process.stderr.write(args.join(' ') + '\n');
console.warn = console.log;
console.info = console.log;

const MAX_NUMBERS = 1 << 22;
const FRAME_LIMIT = 1 << 20;

function frame(tag, payload) {
  const header = Buffer.alloc(8);
  header.write(tag, 0, 'ascii');
  header.writeUInt32LE(payload.length, 4);
  process.stdout.write(Buffer.concat([header, payload]));
}

function json(tag, value) {
  frame(tag, Buffer.from(JSON.stringify(value), 'utf8'));
}

let tf;
let versions = {};
try {
  tf = require('@tensorflow/tfjs-core');
  require('@tensorflow/tfjs-backend-cpu');
  versions = {core: tf.version_core, cpu: require('@tensorflow/tfjs-backend-cpu').version_cpu};
} catch (error) {
  json('HELO', {protocol: 1, error: `tfjs is not installed: npm ci --prefix ${__dirname} (${error.message.split('\n')[0]})`,
                unavailable: true});
  process.exit(0);
}

class NotApplicable extends Error {}

function draw(request, state) {
  const count = request.count;
  if (!Number.isInteger(count) || count < 1 || count > MAX_NUMBERS) {
    throw new NotApplicable(`${count} numbers: the tfjs backend draws 1 to ${MAX_NUMBERS} a call`);
  }
  if (state[1] || state[2] || state[3] || state[5]) {
    throw new NotApplicable('tfjs\'s seed is state word 4 (word 5 zero) and its position counter word 0 ' +
                            '(words 1-3 zero)');
  }
  const seed = state[4];
  const key = `${request.kind} ${request.dtype}`;
  const low = request.low, high = request.high;
  let tensor;
  if (key === 'uniform float32') {
    tensor = tf.randomUniform([count], low === undefined ? 0 : low, high === undefined ? 1 : high, 'float32', seed);
  } else if (key === 'normal float32') {
    tensor = tf.randomNormal([count], 0, 1, 'float32', seed);
  } else if (key === 'truncated_normal float32') {
    tensor = tf.truncatedNormal([count], 0, 1, 'float32', seed);
  } else if (key === 'integers int32') {
    tensor = tf.randomUniformInt([count], low, high, seed);
  } else {
    throw new NotApplicable(`the tfjs backend draws no ${key}`);
  }
  const values = tensor.dataSync();
  tensor.dispose();
  const dtype = request.kind === 'integers' ? 'int32' : 'float32';
  const numbers = dtype === 'int32' ? Int32Array.from(values) : Float32Array.from(values);
  const head = Buffer.alloc(4 + dtype.length + 8);
  head.writeUInt32LE(dtype.length, 0);
  head.write(dtype, 4, 'ascii');
  head.writeBigUInt64LE(BigInt(count), 4 + dtype.length);
  return Buffer.concat([head, Buffer.from(numbers.buffer, numbers.byteOffset, numbers.byteLength)]);
}

function answer(tag, payload) {
  if (tag === 'QUIT') process.exit(0);
  if (tag !== 'DRAW') {
    json('FAIL', {error: `the tfjs backend draws numbers only (no ${tag})`, not_applicable: true});
    return;
  }
  try {
    const length = payload.readUInt32LE(0);
    const request = JSON.parse(payload.subarray(4, 4 + length).toString('utf8'));
    const state = [];
    for (let i = 0; i < 6; i++) state.push(payload.readUInt32LE(4 + length + 4 * i));
    frame('NUMS', draw(request, state));
  } catch (error) {
    json('FAIL', {error: String(error.message).split('\n')[0], not_applicable: error instanceof NotApplicable});
  }
}

let pending = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  while (pending.length >= 8) {
    const tag = pending.subarray(0, 4).toString('ascii');
    const length = pending.readUInt32LE(4);
    if (tag === 'DRAW' && length > FRAME_LIMIT) {
      process.stderr.write(`tfjs_exec: a DRAW of ${length} bytes\n`);
      process.exit(3);
    }
    if (pending.length < 8 + length) break;
    const payload = pending.subarray(8, 8 + length);
    pending = pending.subarray(8 + length);
    answer(tag, payload);
  }
});
process.stdin.on('end', () => process.exit(0));

tf.setBackend('cpu').then(() => {
  json('HELO', {protocol: 1, name: 'tfjs', validates: false, conventions: ['tfjs'],
                describe: {implementation: 'tf.randomUniform / randomNormal / truncatedNormal / randomUniformInt',
                           generator: 'Alea (seedrandom), seeded per call', device: 'cpu (tfjs-backend-cpu)',
                           version: `tfjs-core ${versions.core}`, 'tfjs-core': String(versions.core),
                           'tfjs-backend-cpu': String(versions.cpu), node: process.version,
                           written_against: '4.22.0'}});
});
