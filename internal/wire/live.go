package wire

// LiveMetadataKey marks the artifact-update events that carry an answer an
// LLM call is writing, token by token ("live answers"): its value, in the
// event's and the artifact's metadata, is {"call": name, "attempt": n}.
// Such an artifact (ID "live-" + the call's name, name LiveArtifactName) is
// a preview of the text being written and never part of the task: the task
// keeps the final answer once, as its message. Its first chunk (append
// false) starts the text, later ones (append true) add to it, and a chunk
// with append false again starts it over (a retried call); lastChunk ends
// it.
const LiveMetadataKey = "a2aflow.live"

// LiveArtifactName is the name of the live answers' artifacts.
const LiveArtifactName = "live-answer"

// A progress message relayed live (a remote agent's working status, as the
// task delegating to it follows it) comes as a status-update event of
// state working whose message holds the remote's text; its metadata, and
// its message's, carry LiveMetadataKey with {"call": name, "attempt": n,
// "relayed": true}. Like a live answer it is not part of the task's
// history: a client that reads the task later does not see it.

// A remote agent's artifact relayed live (the task delegating to it
// follows it) comes as an artifact-update event of our task: the
// artifact's ID is the one its durable copy gets (RelayedArtifactID), its
// parts, append and lastChunk are the remote's, and the event's metadata
// carries LiveMetadataKey with {"call": name, "attempt": generation,
// "relayed": true}; a new generation (the remote replaced the artifact)
// starts with append false. Unlike a live answer the artifact does become
// part of the task: when the remote task completes, the workflow adds its
// final content under the same ID.
