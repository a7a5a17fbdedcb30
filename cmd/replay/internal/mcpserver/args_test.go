package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArgumentsAreValidatedByTheirSchema decodes arguments under a tool's schema:
// what the schema refuses is a usage refusal naming the field in the caller's
// words, what it accepts decodes, a null is an absent field.
func TestArgumentsAreValidatedByTheirSchema(t *testing.T) {
	t.Parallel()
	schema := inputSchema[ABInput]()
	cases := []struct {
		args, want string
	}{
		{`"text"`, "ab: the arguments must be a JSON object of the tool's fields, got string"},
		{`{"nope": 1}`, `ab: unknown field "nope"; the fields are `},
		{`{}`, "ab: field mutate is required"},
		{`{"mutate": null}`, "ab: field mutate is required"},
		{`{"mutate": "a=b"}`, "ab: field mutate: got a string; give an array of strings"},
		{`{"mutate": ["a=b", 3]}`, "ab: field mutate: item 1: got an integer; give a string"},
		{`{"mutate": ["a=b"], "jobs": 1.5}`, "ab: field jobs: got 1.5, which is not a whole number; give an integer"},
		{`{"mutate": ["a=b"], "jobs": "2"}`, "ab: field jobs: got a string; give an integer"},
		{`{"mutate": ["a=b"], "diff": 1}`, "ab: field diff: got an integer; give a boolean"},
		{`{"mutate": ["a=b"], "jobs": 1e30}`, "ab: the arguments cannot be read as the tool's fields"},
	}
	for _, c := range cases {
		_, err := decodeArgs[ABInput]("ab", json.RawMessage(c.args), schema)
		require.Error(t, err, c.args)
		var ie *inputError
		require.ErrorAs(t, err, &ie, c.args)
		assert.Equal(t, 2, ie.code, c.args)
		assert.Contains(t, ie.msg, c.want, c.args)
	}
	in, err := decodeArgs[ABInput]("ab", json.RawMessage(`{"mutate": ["a=b"], "jobs": 2, "agent": null, "replicas": 3.0}`), schema)
	require.NoError(t, err)
	assert.Equal(t, []string{"a=b"}, in.Mutate)
	assert.Equal(t, 2, in.Jobs)
	assert.Equal(t, 3, in.Replicas, "3.0 is a whole number")
	assert.Empty(t, in.Agent)
}
