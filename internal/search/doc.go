// Package search holds nodmix's tokenizers and rankers: the seed's BM25+ index behind
// search_tool_bm25, the Tool Search ranker, and retrieval metrics to measure them.
//
// The package is a leaf: it knows nothing of catalogs or tools, only of its own
// document types (Doc for BM25+, RankDoc for the Tool Search ranker). Every ordering it
// produces is deterministic and locale-independent: ties between equal scores are broken
// by plain byte order of the name (BM25+) or id (Ranker), then by document position.
package search
