/* The little the C firmware needs from its board (QEMU mps2-an386): console lines over ARM
 * semihosting, as examples/firmware/board.hpp writes them for the C++ firmware. No printf, so no
 * stdio and no heap is linked. */
#ifndef PBRL_FIRMWARE_C_BOARD_H
#define PBRL_FIRMWARE_C_BOARD_H

/* A line is built piece by piece, then written with board_line_end(). */
void board_text(const char* s);
void board_integer(long long v);
void board_fixed(float v); /* 4 decimals */
void board_float(float v); /* 9 significant digits, as printf's "%.8e" */
void board_line_end(void);
/* Lines "name[r] v[r*columns] ... v[r*columns + columns-1]" for r < rows, floats as board_float. */
void board_rows(const char* name, const float* v, int rows, int columns);

#endif
