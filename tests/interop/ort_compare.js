// ort_compare.js MODEL INPUTS EXPECTED [TOL]
// Runs an ONNX model exported by moonflow in onnxruntime (the npm package
// onnxruntime-node, its native CPU library) and compares every output with
// moonflow's own result. INPUTS and EXPECTED are safetensors files written
// by moonflow (mf.save): tensor names are the model's input and output
// names. Prints the largest absolute difference per output; exits 1 when
// one exceeds TOL (default 1e-5), a name is missing or a shape differs.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require(path.resolve(process.env.ORT_DIR || '.', 'node_modules', 'onnxruntime-node'));

const ARRAYS = {F32: Float32Array, F64: Float64Array, I32: Int32Array, I64: BigInt64Array};
const ORT_TYPES = {F32: 'float32', F64: 'float64', I32: 'int32', I64: 'int64'};

// safetensors: an 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets}}, then the raw little-endian data.
function readSafetensors(file) {
  const buf = fs.readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  const out = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const Arr = ARRAYS[info.dtype];
    if (!Arr) throw new Error(`${file}: tensor ${name} has unsupported dtype ${info.dtype}`);
    const [b, e] = info.data_offsets;
    const bytes = buf.subarray(8 + n + b, 8 + n + e);
    const copy = new Uint8Array(bytes.length);
    copy.set(bytes);
    out[name] = {type: ORT_TYPES[info.dtype], shape: info.shape,
                 data: new Arr(copy.buffer, 0, bytes.length / Arr.BYTES_PER_ELEMENT)};
  }
  return out;
}

async function main() {
  const [model, inputsFile, expectedFile, tolArg] = process.argv.slice(2);
  const tol = tolArg ? Number(tolArg) : 1e-5;
  const session = await ort.InferenceSession.create(model);
  const inputs = readSafetensors(inputsFile);
  const expected = readSafetensors(expectedFile);
  const feeds = {};
  for (const name of session.inputNames) {
    const t = inputs[name];
    if (!t) throw new Error(`${model}: no value for input '${name}' in ${inputsFile}`);
    feeds[name] = new ort.Tensor(t.type, t.data, t.shape);
  }
  const results = await session.run(feeds);
  let ok = true;
  for (const name of session.outputNames) {
    const want = expected[name];
    const got = results[name];
    if (!want) throw new Error(`${model}: no expected value for output '${name}'`);
    if (JSON.stringify(Array.from(got.dims)) !== JSON.stringify(want.shape)) {
      console.log(`${path.basename(model)} ${name}: shape [${got.dims}] != ` +
                  `moonflow [${want.shape}]`);
      ok = false;
      continue;
    }
    let maxdiff = 0;
    for (let i = 0; i < want.data.length; i++) {
      const d = Math.abs(Number(got.data[i]) - Number(want.data[i]));
      if (!(d <= maxdiff)) maxdiff = d;   // NaN propagates as a failure
    }
    const pass = maxdiff <= tol;
    ok = ok && pass;
    console.log(`${path.basename(model)} ${name} [${want.shape}]: max |onnxruntime - moonflow| = ` +
                `${maxdiff.toExponential(3)} (${pass ? 'ok' : 'FAIL'}, tolerance ${tol})`);
  }
  process.exit(ok ? 0 : 1);
}

main().catch((e) => { console.error('ort_compare: ' + e.message); process.exit(1); });
