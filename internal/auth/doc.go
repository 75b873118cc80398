// Package auth holds Folio's users and API tokens.
//
// A user is an admin (may manage users, run fsck, see every document) or
// an author (sees and changes only their own documents). Its identity is
// its id: random ("u" and 16 base32 characters), assigned at creation and
// never reused. What a user owns is recorded by id, so deleting a user and
// adding another of the same name hands the new one nothing; the name is a
// label, unique among the users that exist. A user holds any number of API
// tokens. A token is shown once, when it is issued:
//
//	folio_<id>_<secret>
//
// where <id> is 12 lowercase hex digits naming the token (shown in lists,
// used to revoke it) and <secret> is 32 random bytes in lowercase base32.
// Only SHA-256 of the whole token string is stored; Authenticate compares
// hashes in constant time. Tokens of kind "backup" are read-only: they may
// read documents and pull packs, never change anything. Tokens of kind
// "agent" (an outside model or agent, e.g. over MCP) may read what their
// user may read and create suggestions, and nothing else: the server
// refuses every other write with the code forbidden on every transport.
//
// Keys (under kv.PrefixTable):
//
//	t/user/<name>    user record (msgpack): id, name, role, created
//	t/token/<id>     token record: user name and id, kind, SHA-256 of the token, created
//
// A token authenticates only while the user record of its name carries the
// id it was issued to. Stores written before users had ids get them from
// AssignIDs, in the batch of the owner migration (repo.Repo.MigrateOwners).
//
// Deleting a user deletes their tokens in the same synced batch. Every
// revoked token (explicitly or through its user's deletion) is announced to
// the functions registered with Store.OnRevoke after the batch is durable,
// so that a server can close every live connection that used it.
package auth
