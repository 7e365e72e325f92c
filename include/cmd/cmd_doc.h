/* cmd_doc: `mailsoak doc commands|synopsis|flags|keys|bash`: the generated parts of
 * the manual and the completion's data, from the table of commands and the
 * settings table (cmd/cmd_doc.c). */
#ifndef MS_CMD_DOC_H
#define MS_CMD_DOC_H

/* argv[0] is "doc". 0, 1 when a command's --help failed, or 2 on a bad argument. */
int cmd_doc(int argc, char **argv);

#endif
