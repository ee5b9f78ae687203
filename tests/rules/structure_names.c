/*
 * structure_names.c - every structure the library registers, a name a line, from
 * the library's own table (once_structure_at): what docs_name_everything.sh checks
 * the README against, so that a new structure cannot be left out of it.
 */
#include "once.h"

#include <stdio.h>

int main(void)
{
    for (size_t i = 0; i < once_structure_count(); i++)
        if (puts(once_structure_at(i)->name) == EOF)
            return 1;
    return fflush(stdout) == 0 ? 0 : 1;
}
