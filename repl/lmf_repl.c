/* lmf_repl.c — help(), mf.config, mf.set_num_threads (being written). */
#include "lmf.h"

void lmf_open_repl(lua_State *L)
{
    (void)L;
}
