// check-speedscope.js FILE: validate a speedscope file against the schema
// that ships in the speedscope package (its file format's definition), then
// check what the schema cannot: frame indices in range, one weight per
// sample, and print per profile "NAME TOTAL" (the sum of the weights).
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');

const schemaFile = path.join(path.dirname(require.resolve('speedscope/package.json')),
	'dist/release/file-format-schema.json');
const schema = JSON.parse(fs.readFileSync(schemaFile, 'utf8'));
const file = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
if (!validate(file)) {
	console.error('not a valid speedscope file:', JSON.stringify(validate.errors, null, 1));
	process.exit(1);
}
const nframes = file.shared.frames.length;
for (const p of file.profiles) {
	if (p.type !== 'sampled' || p.samples.length !== p.weights.length) {
		console.error(`profile ${p.name}: not sampled, or samples and weights differ in number`);
		process.exit(1);
	}
	for (const s of p.samples)
		for (const f of s)
			if (!Number.isInteger(f) || f < 0 || f >= nframes) {
				console.error(`profile ${p.name}: frame ${f} out of range`);
				process.exit(1);
			}
	const total = p.weights.reduce((a, b) => a + b, 0);
	if (total !== p.endValue - p.startValue) {
		console.error(`profile ${p.name}: weights add up to ${total}, not endValue - startValue`);
		process.exit(1);
	}
	console.log(`${p.name} ${total}`);
}
