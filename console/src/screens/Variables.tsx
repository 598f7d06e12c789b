import { allPages } from '../api';
import { TextInput, Toggle, useFormState } from '../forms/form';
import { resourceScreens } from '../forms/resource';

/** The account's variables: every check reads them ({{NAME}}, process.env.NAME); a secret one is write-only. */
interface Variable {
  key: string;
  value: string;
  locked: boolean;
  secret: boolean;
}

function VariableFields({ editing }: { editing: boolean }) {
  const form = useFormState();
  const secret = Boolean(form.value('secret'));
  return (
    <>
      <TextInput path="key" label="Name" hint="Letters, digits and _; not starting with a digit" required />
      <TextInput
        path="value"
        label="Value"
        type={secret ? 'password' : 'text'}
        hint={secret && editing ? 'A secret value is never shown again: type the new one to change it' : undefined}
        multiline={secret ? undefined : 3}
        empty="string"
      />
      <Toggle path="secret" label="Secret" hint="Write-only: never shown again, hidden in run logs" />
      <Toggle path="locked" label="Locked" hint="Shown only to members who may change it" />
    </>
  );
}

export const variableScreens = resourceScreens<Variable>({
  noun: 'variable',
  title: 'Variables',
  href: '/variables',
  api: '/v1/variables',
  idOf: (v) => v.key,
  nameOf: (v) => v.key,
  load: (signal) => allPages<Variable>('/v1/variables', signal),
  columns: [
    { label: 'Name', cell: (v) => <code>{v.key}</code> },
    { label: 'Value', cell: (v) => (v.secret ? <span class="muted">secret</span> : <code>{v.value}</code>) },
    { label: 'Locked', cell: (v) => (v.locked ? 'Locked' : ''), narrow: true },
  ],
  empty: 'No variables. Checks read a variable as {{NAME}} in a request, process.env.NAME in a script.',
  form: {
    blank: () => ({ key: '', value: '', secret: false, locked: false }),
    draftOf: (v) => ({ key: v.key, value: v.secret ? '' : v.value, secret: v.secret, locked: v.locked }),
    // A secret left empty is not sent as empty (that would wipe it): the API asks for the value instead.
    toBody: (d, editing) => (editing && d.secret && d.value === '' ? { ...d, value: undefined } : d),
    Fields: VariableFields,
    owns: ['key', 'value', 'secret', 'locked'],
  },
});
