// Package publish is Folio's publishing: which version of a document the
// public sees, who may see it, and the site-wide categories and tags.
//
// A document's published pointer is the ref docs/<id>/published (package
// refs: compare-and-swap, reflog), naming an immutable version. Publish
// first seals an unsealed draft as a checkpoint with reason publish
// (repo.Checkpoint), then, under the document's lock (repo.Locked), moves
// the ref to the head in one synced batch with everything that depends on
// it: the slug claim, the publication record, the public list indexes, the
// tags created on use, the visibility and the doc.published event.
// Unpublish removes the ref and its dependants the same way
// (doc.unpublished). Republishing moves the ref forward; every move is in
// the ref's reflog and the document's stream, and repo.Log marks the
// version the ref names.
//
// Slugs are unique among reachable articles — published ones whose
// visibility is public or password (the site answers a password
// article's URL with a password form, so its existence under the slug is
// public). The ref pub/slugs/<slug> claims a slug for the version
// published under it and moves in the same refs.Update as the published
// ref or the visibility, so of two documents claiming one slug at once
// exactly one compare-and-swap succeeds; the other gets slug_taken,
// naming the other article only to a caller who may see it.
//
// A private article holds no claim: turning one private releases its
// slug, turning it public or password claims the slug again (slug_taken
// when a reachable article took it meanwhile, and nothing changes). So
// slug_taken depends only on what any visitor can see, and an author
// who tries slugs learns nothing about private articles, drafts or
// other authors' unpublished work. Scoping slugs per author would hide
// them as well, but public URLs are site-wide; reserving slugs from the
// draft on would leak drafts. Claims of private articles left by older
// stores are released when another article wants the slug
// (releaseHidden), under the holder's lock.
//
// A document's visibility (public, private, password) is a setting of its
// own, outside the versions: it changes at once (SetVisibility, event
// doc.visibility) without publishing pending edits, so an article can be
// hidden the moment its author wants. A password is stored only as an
// argon2id hash. The attributes attrs.status and attrs.visibility that a
// draft may carry decide nothing.
//
// The public reads (ArticleBySlug, PublicationFor, PublicList) see only
// published public articles and password-protected ones with the right
// password; every other case is the same NotFound error, whose text is
// built from the request alone, after the same reads (a missing slug
// reads a decoy publication's records). Password checks run only for
// password-protected articles, through a guard that bounds their queue,
// drops those whose request ended and backs off per address and per slug
// (guard.go); passwords have at least MinPassword characters.
//
// Keys (under kv.PrefixTable unless noted):
//
//	r/docs/<id>/published                      published version (package refs)
//	r/pub/slugs/<slug>                         version holding the slug, public and password only (package refs)
//	t/pub/<doc>                                publication record (msgpack Publication)
//	t/pubvis/<doc>                             visibility and password hash
//	t/publ/<^published 8>\x00<doc>             public list, newest first (empty)
//	t/publcat/<category>\x00<^published 8>\x00<doc>  by category (folded name)
//	t/publtag/<tag>\x00<^published 8>\x00<doc>       by tag (folded name)
//	t/cat/<folded name>                        category record
//	t/tag/<folded name>                        tag record
//	e/doc:<id>                                 doc.published, doc.unpublished, doc.visibility
//
// Errors are made with package errs; the specific codes are slug_taken,
// category_unknown, password_required, not_published, article_not_found,
// category_exists, tag_exists, category_in_use, tag_in_use,
// category_not_found and tag_not_found.
package publish
