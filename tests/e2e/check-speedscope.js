// check-speedscope.js FILE: validate a speedscope file against the schema
// that ships in the speedscope package (its file format's definition), then
// check what the schema cannot: evented profiles whose frame indices are in
// range, whose times never go back nor leave [startValue, endValue], whose
// each "C" closes the frame the last open "O" opened, all closed at the end;
// and print per profile "NAME TOTAL" (the time covered by outermost frames,
// which must be endValue - startValue: callprof lays contexts end to end).
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
function fail(msg) {
	console.error(msg);
	process.exit(1);
}
for (const p of file.profiles) {
	if (p.type !== 'evented')
		fail(`profile ${p.name}: not evented`);
	const stack = [];
	let at = p.startValue, total = 0, opened = 0;
	for (const e of p.events) {
		if (!Number.isInteger(e.frame) || e.frame < 0 || e.frame >= nframes)
			fail(`profile ${p.name}: frame ${e.frame} out of range`);
		if (e.at < at || e.at > p.endValue)
			fail(`profile ${p.name}: event at ${e.at} after ${at} or past endValue`);
		at = e.at;
		if (e.type === 'O') {
			if (!stack.length)
				opened = e.at;
			stack.push(e.frame);
		} else if (stack.pop() !== e.frame) {
			fail(`profile ${p.name}: "C" of frame ${e.frame} closes another one`);
		} else if (!stack.length) {
			total += e.at - opened;
		}
	}
	if (stack.length)
		fail(`profile ${p.name}: ${stack.length} frames left open`);
	if (total !== p.endValue - p.startValue)
		fail(`profile ${p.name}: frames cover ${total}, not endValue - startValue`);
	console.log(`${p.name} ${total}`);
}
