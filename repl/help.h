/* help.h — the help texts and the global help() function.
 *
 * Every user-facing function of mf has one entry: its name as a user types
 * it after "mf." ("matmul", "random.normal"), its topic, its signature, one
 * paragraph and an example. The example is prompt input: each line is what
 * a user types, and "--> value" shows what the prompt prints. The
 * hand-written entries, for what is not one op of the table (creation,
 * graphs, training, concepts...), are plain text in doc/help/<topic>.txt,
 * made into C at build time; an op bound by the schema binder gets its
 * entry from its descriptor instead (core/op.h: summary, topic, details,
 * example; the signature and options from its attribute schema). */
#ifndef LMF_HELP_H
#define LMF_HELP_H

#include <lua.h>

typedef struct LmfHelpEntry {
    const char *name;       /* "matmul", "random.normal", "Tensor" */
    const char *topic;      /* one of the topics listed by help() */
    const char *signature;  /* "mf.matmul(a, b [, {transpose_a, transpose_b}])" */
    const char *text;       /* one paragraph, wrapped when printed */
    const char *example;    /* lines separated by '\n' */
    int op;                 /* from a descriptor (lmf_op_desc: an op, a composite); -1: a text's */
} LmfHelpEntry;

/* The registry key of the entries lib/'s files declare beside their
 * functions (lib.help, lib/util.lua): an array of {name, topic, signature,
 * text, example}, stored there by lmf_open_lib. */
#define LMF_LIB_HELP "lmf.lib_help"

/* help([topic | name | function | value]): a lua_CFunction. Without an
 * argument lists the topics; with a topic lists its functions; with a
 * function name or value prints its entry; an unknown name prints the
 * closest names. Output goes through the global 'print'. */
int lmf_help(lua_State *L);

#endif
