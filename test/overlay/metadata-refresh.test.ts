import { strict as assert } from 'node:assert';
import { refreshMetadata } from '../../src/overlay/metadata-refresh.js';

/** A metadata.xml as bump wrote it for 6.2.2, with a maintainer's later hand edits. */
const EDITED = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE pkgmetadata SYSTEM "https://www.gentoo.org/dtd/metadata.dtd">
<pkgmetadata>
	<maintainer type="person">
		<email>ada@example.org</email>
		<name>Ada Tester</name>
	</maintainer>
	<maintainer type="project">
		<email>sci@gentoo.org</email>
	</maintainer>
	<use>
		<flag name="benchmark">Build the benchmarks (my wording)</flag>
		<flag name="old">Something 6.2 had</flag>
	</use>
	<upstream>
		<remote-id type="github">ROCm/ROCT-Thunk-Interface</remote-id>
		<remote-id type="github">someone/fork</remote-id>
		<remote-id type="gitlab">mirror/thunk</remote-id>
		<bugs-to>https://github.com/ROCm/ROCT-Thunk-Interface/issues</bugs-to>
	</upstream>
</pkgmetadata>
`;

const KNOWN = { flags: new Set(['benchmark', 'old', 'hipblaslt']), repos: new Set(['ROCm/ROCT-Thunk-Interface', 'ROCm/ROCR-Runtime']) };

describe('overlay: metadata.xml follows the versions a package holds', () => {
  it('a moved source and a new flag: added while both versions are held, the old ones gone once only the new is', () => {
    const both = refreshMetadata(
      EDITED,
      {
        flags: new Map([['benchmark', 'Build the benchmarks'], ['hipblaslt', 'Use hipBLASLt'], ['old', 'Something 6.2 had']]),
        repos: ['ROCm/ROCT-Thunk-Interface', 'ROCm/ROCR-Runtime'],
        bugsTo: 'https://github.com/ROCm/ROCR-Runtime/issues',
      },
      KNOWN,
    );
    assert.match(both, /<flag name="benchmark">Build the benchmarks \(my wording\)<\/flag>\n\t\t<flag name="hipblaslt">Use hipBLASLt<\/flag>\n\t\t<flag name="old">/);
    assert.match(both, /<remote-id type="gitlab">mirror\/thunk<\/remote-id>\n\t\t<remote-id type="github">ROCm\/ROCR-Runtime<\/remote-id>\n/);
    assert.match(both, /<bugs-to>https:\/\/github\.com\/ROCm\/ROCR-Runtime\/issues<\/bugs-to>/);

    const newOnly = refreshMetadata(
      both,
      { flags: new Map([['benchmark', 'Build the benchmarks'], ['hipblaslt', 'Use hipBLASLt']]), repos: ['ROCm/ROCR-Runtime'], bugsTo: 'https://github.com/ROCm/ROCR-Runtime/issues' },
      KNOWN,
    );
    assert.doesNotMatch(newOnly, /ROCT-Thunk-Interface|name="old"/);
    // Hand edits stay: the maintainers, a reworded description, remote-ids the manifest never wrote.
    assert.match(newOnly, /<name>Ada Tester<\/name>[\s\S]*<email>sci@gentoo\.org<\/email>/);
    assert.match(newOnly, /\(my wording\)/);
    assert.match(newOnly, /someone\/fork[\s\S]*mirror\/thunk/);
    // Nothing to do: the text comes back as it was.
    assert.equal(refreshMetadata(newOnly, { flags: new Map([['benchmark', 'x'], ['hipblaslt', 'y']]), repos: ['ROCm/ROCR-Runtime'], bugsTo: 'https://github.com/ROCm/ROCR-Runtime/issues' }, KNOWN), newOnly);
  });

  it('creates <use> and <upstream> where a package had none, and leaves a bugs-to the user chose', () => {
    const bare = '<?xml version="1.0" encoding="UTF-8"?>\n<pkgmetadata>\n\t<maintainer type="project">\n\t\t<email>sci@gentoo.org</email>\n\t</maintainer>\n</pkgmetadata>\n';
    const out = refreshMetadata(bare, { flags: new Map([['hipblaslt', 'Use <hipBLASLt> & co']]), repos: ['ROCm/rocBLAS'] }, { flags: new Set(), repos: new Set() });
    assert.equal(
      out,
      '<?xml version="1.0" encoding="UTF-8"?>\n<pkgmetadata>\n\t<maintainer type="project">\n\t\t<email>sci@gentoo.org</email>\n\t</maintainer>\n' +
        '\t<use>\n\t\t<flag name="hipblaslt">Use &lt;hipBLASLt&gt; &amp; co</flag>\n\t</use>\n' +
        '\t<upstream>\n\t\t<remote-id type="github">ROCm/rocBLAS</remote-id>\n\t</upstream>\n</pkgmetadata>\n',
    );
    const mine = EDITED.replace('https://github.com/ROCm/ROCT-Thunk-Interface/issues', 'https://bugs.example.org/thunk');
    assert.match(refreshMetadata(mine, { flags: new Map(), repos: ['ROCm/ROCR-Runtime'], bugsTo: 'https://github.com/ROCm/ROCR-Runtime/issues' }, KNOWN), /<bugs-to>https:\/\/bugs\.example\.org\/thunk<\/bugs-to>/);
  });
});
